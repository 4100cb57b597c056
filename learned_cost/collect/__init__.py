"""Profile collection: a kernel corpus measured on a device.

``learned_cost.collect.corpus`` holds the kernel families (imports triton and
torch); ``collector`` measures them on a device backend from ``devices``
(cuda, npu, interpreter) into a :class:`learned_cost.dataset.ProfileStore`;
``cli`` is the ``collect`` subcommand. Importing this package imports
neither triton nor torch.
"""

from __future__ import annotations

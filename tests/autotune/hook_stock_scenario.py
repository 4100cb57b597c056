"""Stock triton.autotune under the interpreter with the adaptive hook (run
by test_autotune_hook.py in a child process: the interpreter must be on
before triton loads). Prints one ``ok`` line."""

from learned_cost.collect.devices import Device

Device("interpreter").setup()

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from learned_cost.autotune.hook import make_adaptive_hook  # noqa: E402


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


configs = [triton.Config({"BLOCK": b}, num_warps=w) for b in (64, 128, 256, 512, 1024) for w in (1, 2, 4, 8)]


class P:
    def __init__(self, v):
        self.latency_us, self.latency_low_us, self.latency_high_us = v, v * 0.99, v * 1.01


calls = []


def bench(fn, quantiles=None, **_):
    fn()
    calls.append(1)
    t = 0.001 * len(calls)  # test-only times: each next config is slower
    return [t] * len(quantiles) if quantiles else t


hook = make_adaptive_hook(predictor=lambda items: {it["config"]: P(10.0 + it["config"]) for it in items}, bench=bench,
                          target=("cuda", 90, 32))
tuned = triton.autotune(configs, key=["n"], prune_configs_by={"early_config_prune": hook}, do_bench=hook.do_bench)(
    scale_kernel)
hook.bind(tuned)
x = torch.randn(3000)
out = torch.empty_like(x)
tuned[lambda m: (triton.cdiv(3000, m["BLOCK"]),)](x, out, 3000)
assert torch.allclose(out, 2 * x)
assert hook.calls == 5 and hook.benchmarked == 3 == len(calls), (hook.calls, hook.benchmarked, len(calls))
assert tuned.best_config is hook.kept[0], (tuned.best_config, hook.kept[0])
print("ok stock autotuner: kept", hook.calls, "benchmarked", hook.benchmarked)

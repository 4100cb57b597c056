"""Hardware profiles (published figures per accelerator) and how an item
picks one. By job: ``profile`` (the records and units), ``validate`` (JSON
-> record, checked once), ``load`` (shipped names, files, caches),
``resolve`` (which profile an item asks for), ``ceilings`` (measured
ceilings -> ``measured``), ``ascend`` (triton-ascend detection)."""

from .ascend import ascend_installed
from .ceilings import measured_from_ceilings
from .load import SCHEMA_PATH, list_profiles, load_profile
from .profile import HardwareProfile, Occupancy, ProfileError, Source, UnknownHardwareError
from .resolve import default_hardware_name, default_hardware_reason, match_arch, resolve_hardware
from .validate import occupancy_from_dict, profile_from_dict

__all__ = [
    "SCHEMA_PATH",
    "HardwareProfile",
    "Occupancy",
    "ProfileError",
    "Source",
    "UnknownHardwareError",
    "ascend_installed",
    "default_hardware_name",
    "default_hardware_reason",
    "list_profiles",
    "load_profile",
    "match_arch",
    "measured_from_ceilings",
    "occupancy_from_dict",
    "profile_from_dict",
    "resolve_hardware",
]

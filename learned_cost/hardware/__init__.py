"""Hardware profiles (published figures per accelerator) and how an item
picks one. See ``learned_cost.hardware.profile`` for units and precedence."""

from .profile import (
    SCHEMA_PATH,
    HardwareProfile,
    ProfileError,
    Source,
    UnknownHardwareError,
    ascend_installed,
    default_hardware_name,
    default_hardware_reason,
    list_profiles,
    load_profile,
    match_arch,
    measured_from_ceilings,
    profile_from_dict,
    resolve_hardware,
)

__all__ = [
    "SCHEMA_PATH",
    "HardwareProfile",
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
    "profile_from_dict",
    "resolve_hardware",
]

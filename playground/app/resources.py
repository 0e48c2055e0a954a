"""Where the GUI's data files live: the ``playground.resources`` package.

Kept as the GUI's entry point so its modules import one name; the lookup
itself (and the ``PLAYGROUND_RESOURCES`` override) lives with the data.
"""

from playground.resource_files import ENV_VAR, resource_path, resources_root

__all__ = ["ENV_VAR", "resource_path", "resources_root"]

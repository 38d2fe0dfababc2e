"""Sub-commands of the `cookwala-ros` CLI, one module each (add_arguments + run)."""

"""RemovableHandle: what register_*_hook returns; handle.remove() takes the hook out again."""
import itertools

_next_id = itertools.count()


class RemovableHandle:
    """Removes one hook from the dict it was registered in (and from any companion dicts or sets).

    Usable as a context manager: the hook is removed when the block ends.
    """

    def __init__(self, hooks_dict, *extra_dicts):
        self.id = next(_next_id)
        self._tables = (hooks_dict,) + extra_dicts

    def remove(self):
        for table in self._tables:
            if isinstance(table, set):
                table.discard(self.id)
            else:
                table.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.remove()
        return False

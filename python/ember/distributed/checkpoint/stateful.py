"""torch.distributed.checkpoint.stateful: anything with state_dict() and load_state_dict() (a
module, an optimizer, a user's object) is saved and loaded through them."""
from typing import Any, Dict, Protocol, TypeVar, runtime_checkable


@runtime_checkable
class Stateful(Protocol):
    def state_dict(self) -> Dict[str, Any]:
        ...

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        ...


StatefulT = TypeVar("StatefulT", bound=Stateful)

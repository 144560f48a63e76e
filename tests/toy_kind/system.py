"""The toy kind's system: an electrical ring under another kind name."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from collsim.kinds.network.electrical import Ring


@dataclass(frozen=True)
class ToyRing(Ring):
    """A ring of point-to-point links, of kind ``toy-ring``."""

    topology: ClassVar[str] = "toy-ring"

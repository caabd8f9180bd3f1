"""The bridge with rigid towers of baxter2019 §4.1 (published ``loadSimpleBridge``): the bridge's
layout (``bridge.py``) with fixed towers."""

from __future__ import annotations

from .bridge import _bridge
from .redmax import _count
from .scene import Scene

__all__ = ["bridge_rigid"]


def bridge_rigid(n_deck: int = 20) -> Scene:
    """The bridge with rigid towers (baxter2019 §4.1, Figs. 3–4 left; published
    ``loadSimpleBridge``). Reduced DOF n_deck.

    Same layout as :func:`bridge`, but each tower is one fixed 0.5 × 10 × 0.5 block (centre 5
    above the ground), ground 25 × 0.5 × 0.5, anchors 0.5 × 3 × 0.5, deck blocks bl × 0.5 × 0.5,
    deck joints k = 10, d = 1 (the first k = d = 0), cables k = 1e7 per unit strain, d = 1e3,
    density 1e3, gravity (0, −9.8, 0). Every cable ends on a fixed body, so K_m is block diagonal
    (the thesis' projected block Jacobi preconditioner is then exact). Same deck arch, block
    length and loop closure as :func:`bridge`.
    """
    n_deck = _count(n_deck, "bridge_rigid n_deck", 3)
    P = dict(deck_k=10.0, deck_d=1.0, cable_k=1e7, cable_d=1e3, deck_depth=0.5, tower_depth=0.5)
    info = dict(scene="bridge-rigid", n_deck=n_deck, **P)
    return _bridge(n_deck, rigid=True, P=P, car_factor=0.0, name=f"bridge-rigid:{n_deck}", info=info)

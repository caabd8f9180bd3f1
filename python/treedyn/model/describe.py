"""How a model prints: its tree (index, name indented by depth, parent, joint, q and v slices, mass)."""

from __future__ import annotations

import numpy as np

from .joints import Prismatic, Revolute, Universal


class DescribeMixin:
    """Model's printing."""

    def __repr__(self):
        return f"treedyn.Model(n_bodies={self.n_bodies}, nq={self.nq}, nv={self.nv})"

    def __str__(self):
        """The tree as a table (``describe()``: at most 40 bodies, the middle left out beyond)."""
        return self.describe()

    def describe(self, max_bodies: int | None = 40) -> str:
        """The tree as text, what ``print(model)`` shows: a header with the totals (bodies, nq, nv,
        total mass, gravity), then one line per body — index, name indented by its depth in the
        tree (two spaces a level, at most 8 levels: deeper bodies show their depth as ``[d]``),
        parent, joint kind and name (with the axis of a revolute or prismatic joint, the axes of
        a universal one), its slice of q and v, and its mass.

        max_bodies: with more bodies than this (the world counted), the first two thirds and the
        last third of max_bodies are shown and a line says how many were left out between them;
        None shows every body."""
        if max_bodies is not None and (
            isinstance(max_bodies, bool) or not isinstance(max_bodies, (int, np.integer)) or max_bodies < 2
        ):
            raise ValueError(f"describe: max_bodies must be None or an integer >= 2, got {max_bodies!r}")
        n, parents, qi, vi = self.n_bodies, self.parents, self.q_indices, self.v_indices
        depth = [0] * n
        for i in range(1, n):
            depth[i] = depth[parents[i]] + 1
        names = self.body_names

        def axis(a):
            return "(" + ", ".join(f"{x:.4g}" for x in np.asarray(a) + 0.0) + ")"  # + 0.0: no -0

        def span(start, count, letter):
            return "" if count == 0 else f"{letter}[{start}]" if count == 1 else f"{letter}[{start}:{start + count}]"

        def row(i):
            j = self._joints[i]
            indent = "  " * min(depth[i], 8) + (f"[{depth[i]}] " if depth[i] > 8 else "")
            if i == 0:
                return [str(i), names[0], "", "", "", "", ""]
            joint = type(j).__name__.lower()
            if j.nv:
                joint += f" {self._joint_names[i]!r}"
            if isinstance(j, (Revolute, Prismatic)):
                joint += f" axis {axis(j.axis)}"
            elif isinstance(j, Universal):
                joint += f" axes {axis(j.axis1)} {axis(j.axis2)}"
            mass = f"{self._inertias[i].mass:.4g} kg"
            return [
                str(i),
                indent + names[i],
                names[parents[i]],
                joint,
                span(qi[i], j.nq, "q"),
                span(vi[i], j.nv, "v"),
                mass,
            ]

        shown = list(range(n))
        cut = None
        if max_bodies is not None and n > max_bodies:
            head = (2 * max_bodies) // 3
            cut = (head, n - (max_bodies - head))
            shown = list(range(head)) + list(range(cut[1], n))
        rows = [["#", "body", "parent", "joint", "q", "v", "mass"]] + [row(i) for i in shown]
        widths = [max(len(r[c]) for r in rows) for c in range(7)]

        def fmt(r):
            cells = [r[0].rjust(widths[0])] + [r[c].ljust(widths[c]) for c in range(1, 6)] + [r[6].rjust(widths[6])]
            return "  ".join(cells).rstrip()

        mass = sum(I.mass for I in self._inertias)
        g = ", ".join(f"{x:.4g}" for x in self.gravity + 0.0)
        lines = [
            f"treedyn.Model: {n} bod{'y' if n == 1 else 'ies'} (the world and {n - 1} more), nq = {self.nq}, nv = {self.nv}, "
            f"total mass {mass:.6g} kg, gravity ({g}) m/s²",
            fmt(rows[0]),
        ]
        for k, r in enumerate(rows[1:]):
            if cut is not None and k == cut[0]:
                lines.append(
                    f"... {cut[1] - cut[0]} bodies left out ({cut[0]} to {cut[1] - 1}): model.describe(None) shows all"
                )
            lines.append(fmt(r))
        return "\n".join(lines)

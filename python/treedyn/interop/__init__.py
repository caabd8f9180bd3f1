"""Gradients of treedyn's dynamics in PyTorch and JAX, from the analytic derivatives
(treedyn.algorithms.derivatives) instead of tracing the C++ kernels.

- ``treedyn.interop.torch``: ``torch.autograd.Function`` wrappers (``pip install treedyn[torch]``);
- ``treedyn.interop.jax``: ``jax.pure_callback`` with a custom JVP, so ``jax.grad``, ``jax.jacfwd``,
  ``jax.jacrev``, ``jax.jit`` and ``jax.vmap`` work (``pip install treedyn[jax]``).

Both differentiate q in its coordinates (nq numbers: quaternions as 4), as autodiff frameworks do:
the tangent-space derivatives of treedyn.algorithms.derivatives are mapped through the chart of each joint
(treedyn.interop._coordinates). Neither is imported by ``import treedyn``.
"""

"""What the tests share, in one place: models, robot and MJCF texts, reference computations and
checks. Tests import from here (``from support.redmax import step_bound``), never from one
another; conftest.py holds the shared fixtures and rounding bounds."""

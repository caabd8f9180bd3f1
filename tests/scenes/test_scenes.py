"""The plain model generators (python/treedyn/scenes/chain.py, random_tree.py): their arguments."""

import numpy as np
import pytest

from treedyn.scenes import chain, random_tree


def test_chain_and_tree_sizes_are_whole_numbers():
    # found by tests/test_fuzz_api.py: n = inf escaped as OverflowError, joints=() as "high <= 0"
    assert chain(np.int64(3)).nv == 3 and chain(2.0).nv == 2 and random_tree(3, 0).n_bodies == 4
    for bad in (0, -1, 2.5, np.inf, np.nan):
        with pytest.raises(ValueError, match=r"a chain needs n >= 1 links, got"):
            chain(bad)
        with pytest.raises(ValueError, match=r"a tree needs n >= 1 bodies, got"):
            random_tree(bad)
    with pytest.raises(TypeError, match="a chain needs n >= 1 links, got '3'"):
        chain("3")
    for joints in ((), "revolute"):
        with pytest.raises(ValueError, match="joints must be a non-empty sequence of joint kinds"):
            random_tree(3, 0, joints=joints)

"""URDF builders the tests share: a robot from links and joints written inline."""


def inertial(mass, xyz=(0, 0, 0), rpy=(0, 0, 0), diag=(0.01, 0.02, 0.025), off=(0, 0, 0)):
    ixx, iyy, izz = diag
    ixy, ixz, iyz = off
    return (
        f'<inertial><origin xyz="{" ".join(map(str, xyz))}" rpy="{" ".join(map(str, rpy))}"/>'
        f'<mass value="{mass}"/><inertia ixx="{ixx}" ixy="{ixy}" ixz="{ixz}" iyy="{iyy}" iyz="{iyz}" '
        f'izz="{izz}"/></inertial>'
    )


def robot(*parts, name="r"):
    return f'<?xml version="1.0"?>\n<robot name="{name}">\n' + "\n".join(parts) + "\n</robot>\n"


def link(name, *inner):
    return f'<link name="{name}">' + "".join(inner) + "</link>"


def joint(name, kind, parent, child, xyz=(0, 0, 0), rpy=(0, 0, 0), axis=None, extra=""):
    ax = f'<axis xyz="{" ".join(map(str, axis))}"/>' if axis is not None else ""
    return (
        f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
        f'<origin xyz="{" ".join(map(str, xyz))}" rpy="{" ".join(map(str, rpy))}"/>{ax}{extra}</joint>'
    )


ARM = robot(
    link("base", inertial(5.0)),
    link("l1", inertial(1.0, (0.1, 0, 0), (0.1, 0.2, 0.3))),
    link("tool", inertial(0.5, (0, 0, 0.05))),
    link("l2", inertial(0.8, (0, 0.1, 0))),
    link("l3", inertial(0.3, (0, 0, 0.02))),
    link("wheel", inertial(0.2)),
    joint(
        "j1",
        "revolute",
        "base",
        "l1",
        (0, 0, 0.3),
        (0, 0, 0.5),
        (0, 0, 2),
        '<limit lower="-1.5" upper="2" effort="1" velocity="1"/>',
    ),
    joint("tool_mount", "fixed", "l1", "tool", (0.2, 0, 0), (0.3, 0, 0)),
    joint("j2", "continuous", "tool", "l2", (0, 0, 0.1), axis=(1, 1, 0)),
    joint(
        "j3",
        "prismatic",
        "l2",
        "l3",
        (0, 0.2, 0),
        axis=(0, 0, 1),
        extra='<limit lower="0" upper="0.1" effort="1" velocity="1"/>',
    ),
    joint("jw", "continuous", "l1", "wheel", (0, 0.1, 0), axis=(0, 1, 0)),
)

"""MJCF texts the tests share."""

CREATURE = """
<mujoco model="creature">
  <compiler angle="radian"/>
  <option gravity="0.5 -0.3 -9.81"/>
  <default>
    <joint type="hinge" axis="0 1 0"/>
    <default class="leg"><geom type="capsule" size="0.03" density="900"/></default>
  </default>
  <worldbody>
    <body name="torso" pos="0 0 0.6" quat="0.9 0.1 0 0.2">
      <freejoint name="root"/>
      <geom type="ellipsoid" size="0.25 0.15 0.08" density="600"/>
      <body name="tail" pos="-0.25 0 0">
        <joint name="tail_slide" type="slide" axis="-1 0 0.3"/>
        <geom type="cylinder" fromto="0 0 0 -0.2 0 0.05" size="0.02"/>
      </body>
      <body name="fl_thigh" pos="0.2 0.1 0" childclass="leg">
        <joint name="fl_hip" type="ball" pos="0 0 0.02"/>
        <geom fromto="0 0 0 0.1 0.1 -0.15"/>
        <body name="fl_shin" pos="0.1 0.1 -0.15">
          <joint name="fl_knee" axis="1 -1 0"/>
          <geom fromto="0 0 0 0.05 0.05 -0.2"/>
        </body>
      </body>
      <body name="fr_thigh" pos="0.2 -0.1 0" childclass="leg">
        <joint name="fr_hip" type="ball" pos="0 0 0.02"/>
        <geom fromto="0 0 0 0.1 -0.1 -0.15"/>
        <body name="fr_shin" pos="0.1 -0.1 -0.15">
          <joint name="fr_knee" axis="1 1 0"/>
          <geom fromto="0 0 0 0.05 -0.05 -0.2"/>
        </body>
      </body>
      <body name="bl_thigh" pos="-0.2 0.1 0" childclass="leg">
        <joint name="bl_hip_x" axis="1 0 0"/>
        <joint name="bl_hip_y" pos="0 0 0.01"/>
        <geom fromto="0 0 0 -0.1 0.1 -0.15"/>
        <body name="bl_shin" pos="-0.1 0.1 -0.15">
          <joint name="bl_knee" type="ball"/>
          <geom fromto="0 0 0 -0.05 0.05 -0.2"/>
        </body>
      </body>
      <body name="br_thigh" pos="-0.2 -0.1 0" childclass="leg">
        <joint name="br_hip" type="ball"/>
        <geom fromto="0 0 0 -0.1 -0.1 -0.15"/>
        <body name="br_shin" pos="-0.1 -0.1 -0.15">
          <joint name="br_knee" range="-1 1"/>
          <geom fromto="0 0 0 -0.05 -0.05 -0.2"/>
          <body name="br_foot" pos="-0.05 -0.05 -0.2"><geom type="sphere" size="0.04"/></body>
        </body>
      </body>
    </body>
    <body name="ball" pos="1 0 0.2">
      <joint name="ball_free" type="free"/>
      <geom type="sphere" size="0.1" mass="0.4"/>
    </body>
  </worldbody>
</mujoco>
"""


HUMANOID = """
<mujoco model="humanoid-like">
  <default>
    <joint pos="0 0 0"/>
    <geom type="capsule" size="0.05" density="1000"/>
  </default>
  <worldbody>
    <body name="pelvis" pos="0 0 1">
      <freejoint/>
      <geom fromto="0 -0.1 0 0 0.1 0" size="0.09"/>
      <body name="chest" pos="0 0 0.1">
        <joint name="abdomen_z" axis="0 0 1" pos="0 0 -0.05"/>
        <joint name="abdomen_y" axis="0 1 0" pos="0 0 -0.05"/>
        <geom fromto="0 -0.08 0.1 0 0.08 0.1" size="0.08"/>
        <body name="head" pos="0 0 0.3"><geom type="sphere" size="0.1"/></body>
        <body name="upper_arm_r" pos="0 -0.17 0.15">
          <joint name="shoulder_r1" axis="2 1 1"/>
          <joint name="shoulder_r2" axis="0 -1 1"/>
          <geom fromto="0 0 0 0.15 -0.15 -0.15" size="0.04"/>
          <body name="lower_arm_r" pos="0.16 -0.16 -0.16">
            <joint name="elbow_r" axis="0 -1 1"/>
            <geom fromto="0.01 0.01 0.01 0.17 0.17 0.17" size="0.031"/>
          </body>
        </body>
      </body>
      <body name="thigh_l" pos="0 0.1 -0.04">
        <joint name="hip_x_l" axis="-1 0 0"/>
        <joint name="hip_z_l" axis="0 0 -1"/>
        <joint name="hip_y_l" axis="0 1 0"/>
        <geom fromto="0 0 0 0 -0.01 -0.34" size="0.06"/>
        <body name="shin_l" pos="0 -0.01 -0.403">
          <joint name="knee_l" pos="0 0 0.02" axis="0 -1 0"/>
          <geom fromto="0 0 0 0 0 -0.3" size="0.049"/>
          <body name="foot_l" pos="0 0 -0.39">
            <joint name="ankle_l" type="ball" pos="0 0 0.08"/>
            <geom type="box" size="0.08 0.04 0.02" pos="0.04 0 0"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

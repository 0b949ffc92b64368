@0xde5d4c84f3419d2a;
# Inertial measurement unit, published at 200 Hz.

using Common = import "common.capnp";

struct Imu {
  # One IMU sample in the sensor frame named by `header.frameId`, which is mounted aligned with
  # the vehicle body frame (x forward, y left, z up).

  header @0 :Common.Header;

  angularVelocity @1 :Common.Vector3;
  # Rotation rate about each axis, radians per second; z is the yaw rate.

  linearAcceleration @2 :Common.Vector3;
  # Specific force, metres per second squared, as an accelerometer measures it: a vehicle at
  # rest on level ground reads (0, 0, +9.81), because the reading includes the reaction to gravity.

  orientation @3 :Common.Quaternion;
  # Attitude of the sensor frame relative to the local east-north-up frame, from the IMU's own
  # filter. Yaw 0 faces east.
}

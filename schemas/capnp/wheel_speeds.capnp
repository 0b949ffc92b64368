@0xff3a050c1ce55c20;
# Wheel-speed sensor readings from the ABS module, published at 100 Hz.

using Common = import "common.capnp";

struct WheelSpeeds {
  # Linear speed of each wheel at its tyre's rolling radius, metres per second, always >= 0
  # (ABS sensors do not report direction; see DriverInputs.gear for reverse). Wheels differ from
  # the vehicle speed in corners (outer wheels faster) and when a tyre slips or locks.

  header @0 :Common.Header;

  frontLeft @1 :Float32;
  # Front left wheel, m/s.

  frontRight @2 :Float32;
  # Front right wheel, m/s.

  rearLeft @3 :Float32;
  # Rear left wheel, m/s.

  rearRight @4 :Float32;
  # Rear right wheel, m/s.
}

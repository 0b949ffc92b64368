@0xae2e6faf0856a706;
# Types shared by the Redline telemetry schemas. This file defines no root type of its own: it is
# compiled into the descriptor of every root type that uses one of its structs.
#
# Conventions for every schema in this folder:
# - SI units unless the field name says otherwise; the unit is the field name's suffix
#   (`Mps` metres per second, `Deg` degrees, `C` degrees Celsius, `Pct` percent 0..100).
# - Vehicle body frame: x forward, y left, z up (ISO 8855). Angles are counter-clockwise positive.
# - Field ordinals are forever: add fields at the end, never renumber or change a field's type.

struct Header {
  # Stamp carried by every root message: when and where the data was sampled.

  seq @0 :UInt64;
  # Per-publisher sequence number, incremented by one for each message on a topic. A gap means
  # the publisher, the network or the recorder dropped messages.

  stampNs @1 :UInt64;
  # When the producing ECU sampled the data, in nanoseconds of its monotonic clock. This is the
  # sensor's time; the recorder adds its own log and publish times beside the message.

  frameId @2 :Text;
  # Coordinate frame or component the data refers to, e.g. "imu_link" or "front_axle".
}

struct Vector3 {
  # A 3-vector in the frame named by the enclosing message's header.

  x @0 :Float64;
  y @1 :Float64;
  z @2 :Float64;
}

struct Quaternion {
  # A rotation as a unit quaternion (Hamilton convention, scalar last). The identity rotation is
  # (0, 0, 0, 1), which is also the default so an unset orientation reads as "no rotation".

  x @0 :Float64;
  y @1 :Float64;
  z @2 :Float64;
  w @3 :Float64 = 1.0;
}

@0xe3101708f0944161;
# Position fix from the GNSS receiver, published at 10 Hz.

using Common = import "common.capnp";

struct GnssFix {
  # One navigation solution. When `fixType` is `noFix` the position fields repeat the last known
  # position and must not be used.

  header @0 :Common.Header;

  latitudeDeg @1 :Float64;
  # WGS 84 latitude, degrees, north positive.

  longitudeDeg @2 :Float64;
  # WGS 84 longitude, degrees, east positive.

  altitudeM @3 :Float64;
  # Height above the WGS 84 ellipsoid, metres.

  fixType @4 :FixType;
  # Quality of this solution.

  satellitesUsed @5 :UInt8;
  # Number of satellites used in the solution (not merely tracked).

  hdop @6 :Float32;
  # Horizontal dilution of precision, dimensionless; below 1 is excellent, above 5 is poor.

  enum FixType {
    # How the receiver solved the position, from worst to best.

    noFix @0;
    # No solution: too few satellites (tunnel, garage, cold start).

    fix2d @1;
    # Horizontal position only, altitude held.

    fix3d @2;
    # Standalone 3D solution, a few metres.

    dgps @3;
    # Differential corrections applied (SBAS or a base station), about a metre.

    rtkFloat @4;
    # RTK with float ambiguities, decimetres.

    rtkFixed @5;
    # RTK with fixed ambiguities, centimetres.
  }
}

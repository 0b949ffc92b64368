//! End-to-end journeys live in `tests/`.

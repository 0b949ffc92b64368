//! Independent MCAP verifier (in progress).

//! Shared helpers for the yazses integration tests.

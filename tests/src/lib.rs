//! Test helpers shared by the conformance suites.

//! Unit tests of the HPA controller on the fixture.

"""Helpers shared by tests: real servers and builders, no mocks."""

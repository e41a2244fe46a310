"""Stub: fvcore imports iopath at package import; counting never uses it."""

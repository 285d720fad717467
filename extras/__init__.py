"""rageval_min_extras: optional adapters that need third-party packages.

This folder is shipped in the wheel as the import package ``rageval_min_extras``.
Nothing here is imported by the core unless a user asks for a backend that
lives here; each adapter fails with the exact ``pip install`` command when its
dependency is missing.
"""

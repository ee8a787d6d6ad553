"""A test-only plugin module that fails at import, as a broken plugin does."""

raise RuntimeError("this plugin is broken (test)")

"""Suite-level logic as pure functions: summaries over trials, and the gate against a baseline."""

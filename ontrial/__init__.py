"""ontrial: durable eval workflows that put AI SRE agents on trial."""

__version__ = "0.1.0"

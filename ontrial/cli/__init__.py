"""The ``ontrial`` command line (entry point ``ontrial.cli.main:main``)."""

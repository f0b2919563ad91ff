"""The base every wire-format model shares."""

from pydantic import BaseModel, ConfigDict


class Wire(BaseModel):
    """A strict, immutable wire-format model: unknown fields are an error, not a silent drop."""

    model_config = ConfigDict(extra="forbid", frozen=True)

"""Wire formats shared by the core, the activities and the workflows (pydantic, extra="forbid")."""

"""kubesim: an embedded Kubernetes cluster that real clients (kubectl, the official Python client,
MCP servers) use unmodified. It knows nothing about evals."""

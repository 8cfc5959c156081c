"""Python function + call arguments -> Graph (signature: argument guards; trace: proxies)."""

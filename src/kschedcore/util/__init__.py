"""Small helpers with no scheduling knowledge: clocks, Go arithmetic."""

"""The scheduling framework's vocabulary: status codes, plugin names, profiles."""

"""The read side: queries over a namespace's read models, answered as API models."""

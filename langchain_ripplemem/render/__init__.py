"""Text and pictures of memories: the plain-text lines recall prompts, tools and the CLI share; the HTML picture."""

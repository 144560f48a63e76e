"""What a reproduction writes: data files, figures, comparison tables and the HTML report."""

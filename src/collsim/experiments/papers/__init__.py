"""The papers' reproductions: their registry, published tables and evaluations (one module or package per paper)."""

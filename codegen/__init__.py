"""Stage 3: render loop IR as source text (C now, CUDA later), through jinja2 templates."""

from tritonforge.cli import app

app()

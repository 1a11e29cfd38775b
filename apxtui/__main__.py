from apxtui.cli import run

run()

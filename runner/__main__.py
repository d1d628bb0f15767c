from runner.cli import main

main()

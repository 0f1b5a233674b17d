from devops_agent.cli.app import main

main()

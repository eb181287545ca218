from wordcount import main

raise SystemExit(main())

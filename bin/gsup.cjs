#!/usr/bin/env node
'use strict';
require('../dist/cli.cjs')
  .main()
  .then((code) => process.exit(code));

#!/usr/bin/env node
// activity-check adapter for the AG-UI reference TypeScript client, @ag-ui/client and
// @ag-ui/core as pinned in this folder's package-lock.json (0.0.59, the last of the 0.0.x
// line). The work is in ../ag-ui-client/driver.mjs (shared with 1.0.0): this file hands it
// the modules this folder resolves.
//   node adapter.mjs --mode reducer|pipeline
import * as client from "@ag-ui/client";
import * as rxjs from "rxjs";
import { serve } from "../ag-ui-client/driver.mjs";

serve({ client, rxjs, adapterUrl: import.meta.url });

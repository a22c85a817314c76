/**
 * Whether this process is the operator's command (src/command/): it sets
 * this before it imports the host's module, so that the plugin that module
 * builds and attaches starts no letter worker here (the command starts no
 * worker and serves nothing; docs/operations.md "The operator's command").
 */
let inCommand = false;

export const commandMode = {
  get on(): boolean {
    return inCommand;
  },
  enter(): void {
    inCommand = true;
  },
};

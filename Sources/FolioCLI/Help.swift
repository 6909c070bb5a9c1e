/// The help text of the tool and of each subcommand.
enum Help {
    static let tool = """
        folio: inspect, check and repair a Folio store folder (docs/CLI.md)

        usage: folio <command> [options] [DIR]

        commands:
          status [--verify] [DIR]        collections, entities, outbox, journal, last sync
          verify [DIR]                   check every file against FORMAT.md; never writes
          recover [DIR]                  replay the journal, clean temp files, quarantine unreadable files
          outbox list|show|retry|drop    the commands waiting to be sent, and the failed ones
          drain --server URL [DIR]       send the pending commands to a server (PROTOCOL.md)
          backup DIR DEST                a consistent copy of a store, while writers run
          snapshot DIR DEST              a consistent hard-link snapshot (cheap; then rsync it)
          migrate --plan FILE [--dry-run] [DIR]   run (or preview) JSON-level migrations
          merge-driver setup [DIR]       let git merge the data files per entity
          resolve FILE...                merge a data file git left with conflict markers
          restore [--list] FILE [VERSION] [DIR]   bring an older version of a data file back

        DIR defaults to the current directory. `folio <command> --help` describes a command.
        Exit codes: 0 success, 1 problems found (or the operation failed), 2 usage error.
        """

    static let mergeDriver = """
        usage: folio merge-driver setup [DIR]
               folio merge-driver BASE OURS THEIRS [PATH]

          setup   in the git repository holding the store in DIR, name this executable as the merge
                  driver "folio" (git config merge.folio.driver) and route the store's data files to it
                  (DIR/.gitattributes; commit it). Needs git.
          BASE OURS THEIRS [PATH]   what git runs (%O %A %B %P): merges the three versions of a data
                  file per entity and writes the result over OURS. An entity one side changed takes
                  that side; one both changed is merged field by field, the incoming side's values
                  first, and listed on standard error. The result names the working copy's revision,
                  with both sides' as ancestors (FORMAT.md, "Revisions").

        Exit code 1 when a version is not a data file: git then leaves the conflict to you.
        """

    static let resolve = """
        usage: folio resolve FILE...

        Merges each data file that git left with conflict markers (no merge driver set up) per entity,
        and rewrites it without markers. Inside a git repository in the middle of a merge, the three
        versions git keeps for the conflict (the merge base, ours, theirs) are merged exactly, as the
        merge driver does. Elsewhere both sides are taken from the markers: with git's diff3 or zdiff3
        style they hold the base; without it, nothing either side lacks is deleted. Then `git add` it.

        Exit code 1 when a file has no markers or a side is not a data file (the file is left as it is).
        """

    static let restore = """
        usage: folio restore --list FILE [DIR]
               folio restore FILE VERSION [DIR]

        FILE is a data file of the store in DIR (todos/2026-11/2026-11-22.json).

          --list   the versions of FILE that .folio/versions/ keeps (30 days by default), newest first:
                   when, how many entities, and the name to restore it by
          VERSION  makes that version the store's state again: it is saved over FILE as an edit of
                   Folio's current version, which the app adopts like any hand edit (the entities it
                   lacks are deleted and, for a collection that pushes, sent as deletes)

        Putting an older copy of a file back by hand deletes nothing (FORMAT.md, "Editing by hand"):
        this command is how to restore on purpose.
        """

    static let status = """
        usage: folio status [--verify] [--json] [--plan FILE] [DIR]

        Summarises the store in DIR without writing anything, quickly however long the outbox: each
        collection with its partitioning, partitions and entities (committed transactions still in
        the journal included), how many commands are pending and the next one (with its failed
        attempts), the failed and quarantined commands, the journal, the newest command sent, and the
        pull cursors. It checks only what it reads, not every file, and says so.

          --verify  also check every file as `folio verify` does, and say how many problems it finds
                    (its time grows with the store and the outbox)
          --json    one JSON document on standard output (shape in docs/CLI.md)
          --plan    a migration plan (docs/ChangingModels.md): also list its migrations the store has
                    not run yet (the store's schema version is always shown)

        Exit code 1 when commands are failed or quarantined, or an error was found (by --verify, or
        in what status read).
        """

    static let verify = """
        usage: folio verify [--json] [--strict] [DIR]

        Checks every file of the store in DIR against FORMAT.md: folio.json, every partition file
        (JSON, shape, names, ids unique within a collection, files where their keys say), the journal
        (header, checksums, torn tail), the outbox (numbering, command files, failed reasons, sent
        archive, quarantine), attempts.json, sync.json, indexes, temp files, and files that are not data
        (sync-tool conflict copies, rsync temps, editor backups). Never writes, not even a lock file.

        One problem per line: path:line:column: severity: message

          --json    one JSON document on standard output (shape in docs/CLI.md)
          --strict  warnings count as problems too (exit code 1)

        Exit code 0 when there is no error (warnings and notes are printed), 1 otherwise.
        """

    static let recover = """
        usage: folio recover [--json] [DIR]

        Repairs the store in DIR after a crash or a bad copy, and says what it did: moves files that
        cannot be read to .folio/quarantine/ (never deletes them), deletes damaged indexes, removes
        leftover temp files, replays the journal's committed transactions into the files, drops a torn
        journal tail, and moves unreadable command files to outbox/quarantine/. Then verifies.

        A quarantined partition file's entities are out of the store until you repair the file and
        merge it back by hand; the output says so for each one.

          --json    one JSON document on standard output (shape in docs/CLI.md)

        Exit code 0 when the folder verifies afterwards, 1 when errors remain (they need a person).
        """

    static let outbox = """
        usage: folio outbox list [--all] [--json] [DIR]
               folio outbox show N [--json] [DIR]
               folio outbox retry N [DIR]
               folio outbox drop N [--yes] [DIR]

          list    the first 50 pending commands in sending order and how many more wait (--all: every
                  one), the failed ones with why, quarantined files
          show    one pending or failed command's whole file (and its reason and attempts)
          retry   put failed command N back into the queue, under its number
          drop    delete failed command N for good: its change never reaches the server and is LOST.
                  Asks for confirmation unless --yes.

        list and show never write. Exit code 1 when there is no such command.
        """

    static let drain = """
        usage: folio drain --server URL [--batch N] [--header 'Name: value']... [DIR]

        Sends the pending commands of the store in DIR to the server at URL with the protocol of
        PROTOCOL.md, in order, each with its idempotency key, and records each outcome (sent commands
        go to outbox/sent/, rejected ones to outbox/failed/). Prints a progress line on standard error.
        Stops when the queue is empty, or at the first failure that needs waiting (network, 5xx, 429).

          --server URL        the server's base URL (required)
          --batch N           send up to N commands per request (POST /batch); default 1
          --header 'N: v'     an extra HTTP header on every request (repeatable), e.g. Authorization

        Exit code 0 when the queue is empty afterwards, 1 when commands remain or failed.
        """

    static let backup = """
        usage: folio backup DIR DEST

        Copies the store in DIR to DEST (a folder that does not exist or is empty), consistently, while
        other processes keep writing: it takes the writers' lock, checkpoints, copies every data file
        durably, then verifies the copy. .folio/ (journal, indexes, retry bookkeeping) is not copied;
        the copy has an empty journal.

        Exit code 0 when the copy verifies, 1 otherwise.
        """

    static let snapshot = """
        usage: folio snapshot DIR DEST

        Makes a consistent snapshot of the store in DIR in DEST (a folder that does not exist or is
        empty, on the same file system for it to be cheap) while other processes keep writing: under
        the lock writers take, it hard-links every file (Folio replaces files only by rename, so a link
        is a frozen version) and copies the journal; across devices it copies. Nothing is checkpointed
        and DIR is not written. The snapshot opens to a state between two transactions. To copy a live
        store to another machine: `folio snapshot DIR SNAP && rsync -a SNAP/ host:DEST/`.

        Exit code 0 when the snapshot is made, 1 otherwise.
        """

    static let migrate = """
        usage: folio migrate --plan FILE [--dry-run] [--json] [DIR]
               folio migrate --dry-run [DIR]

        Runs the migrations of a JSON migration plan (docs/ChangingModels.md) that the store in DIR
        has not recorded yet, all or nothing: a crash at any point leaves the old store or the new one,
        and the next open finishes or discards what was interrupted. Pending and failed outbox commands
        are migrated with the data.

          --plan FILE   the migration plan: {"migrations": [{"name": …, "steps": […]}]}
          --dry-run     say what would change (collections, files, commands), write nothing
          --json        the report as one JSON document

        Without --plan, --dry-run shows the store's schema version and any interrupted migration.
        A store that recorded migrations the plan does not have (a newer app) is refused, never
        rewritten. Exit code 1 if a step fails (nothing is changed).
        """
}

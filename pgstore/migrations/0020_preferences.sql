-- 0020: each account's categories and its recipients' choices of them
-- (store.Preferences). A category is one row per account and name; a
-- choice one row per account, channel, recipient and category, the
-- recipient in its channel's canonical form as a suppression list keeps
-- it. Nothing deletes choices on a timer, for the reason nothing deletes
-- suppressions: a store that forgot a "no" would send what the recipient
-- declined.
CREATE TABLE {{s}}{{p}}categories (
    account     text NOT NULL,
    -- A category's name (storeutil.CategoryName checks its form), in
    -- byte order (collation "C"), the order Categories lists them in,
    -- whatever the database's collation.
    name        text COLLATE "C" NOT NULL CHECK (name <> ''),
    description text NOT NULL,
    opt_in      boolean NOT NULL,
    critical    boolean NOT NULL,
    PRIMARY KEY (account, name)
);

CREATE TABLE {{s}}{{p}}choices (
    account    text NOT NULL,
    -- Any channel's name (store.SuppressibleKind checks its form).
    kind       text COLLATE "C" NOT NULL CHECK (kind <> ''),
    recipient  text COLLATE "C" NOT NULL,
    category   text COLLATE "C" NOT NULL,
    allowed    boolean NOT NULL,
    updated_at timestamptz NOT NULL,
    -- The primary key serves both reads: a recipient's choices (Choices:
    -- account, kind, recipient) and a send's lookup of its recipients'
    -- choices of one category (LookupChoices: the same, and category).
    PRIMARY KEY (account, kind, recipient, category),
    -- A choice exists only of a category its account defined: SetChoice
    -- of another fails here even against a concurrent RemoveCategory,
    -- and RemoveCategory takes the category's choices with it. The
    -- cascade finds them through the primary key's leading account
    -- column: it reads the account's choices, as memstore walks them,
    -- which spares every SetChoice the upkeep of a second index for the
    -- rare removal.
    FOREIGN KEY (account, category) REFERENCES {{s}}{{p}}categories (account, name) ON DELETE CASCADE
);

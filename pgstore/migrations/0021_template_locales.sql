-- 0021: a custom template's variants by locale (store.Template.Locales).
--
-- One jsonb object holding, under each variant's BCP 47 tag as the
-- template names it ("hi", "hi-IN"), that variant's bodies in the form of
-- the bodies column (migration 0012): by kind, an object of the parts
-- "subject", "text" and "html", an empty part left out. Empty: the base
-- alone, which every template written before this migration has.
ALTER TABLE {{s}}{{p}}templates
    ADD COLUMN locales jsonb NOT NULL DEFAULT '{}'
        CHECK (jsonb_typeof(locales) = 'object');

-- 0012: a custom template's bodies per channel kind (store.Template.Bodies).
--
-- The chat, SMS and email columns of the templates table become one jsonb
-- object that holds, under each kind, that kind's body: an object with
-- the parts "subject", "text" and "html", an empty part left out. chat
-- becomes "chat"'s text, sms "sms"'s text, and email_subject, email_html
-- and email_text "email"'s subject, html and text. A kind whose parts were
-- all empty is left out: the template does not serve it, as it did not
-- with empty columns. The rewrite locks the templates table for as long
-- as it takes; processes that still read the old columns fail until they
-- are upgraded.
ALTER TABLE {{s}}{{p}}templates
    ADD COLUMN bodies jsonb NOT NULL DEFAULT '{}'
        CHECK (jsonb_typeof(bodies) = 'object');

UPDATE {{s}}{{p}}templates SET bodies =
    CASE WHEN chat = '' THEN '{}'::jsonb
        ELSE jsonb_build_object('chat', jsonb_build_object('text', chat)) END
    || CASE WHEN sms = '' THEN '{}'::jsonb
        ELSE jsonb_build_object('sms', jsonb_build_object('text', sms)) END
    || CASE WHEN email_subject = '' AND email_html = '' AND email_text = '' THEN '{}'::jsonb
        ELSE jsonb_build_object('email', jsonb_strip_nulls(jsonb_build_object(
            'subject', NULLIF(email_subject, ''),
            'text', NULLIF(email_text, ''),
            'html', NULLIF(email_html, '')))) END
WHERE chat <> '' OR sms <> '' OR email_subject <> '' OR email_html <> '' OR email_text <> '';

ALTER TABLE {{s}}{{p}}templates
    DROP COLUMN chat,
    DROP COLUMN sms,
    DROP COLUMN email_subject,
    DROP COLUMN email_html,
    DROP COLUMN email_text;

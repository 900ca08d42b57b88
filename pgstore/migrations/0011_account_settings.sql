-- 0011: an account's settings per channel kind (store.Account.Settings).
--
-- The SMS and chat columns of the accounts table become one jsonb object
-- that holds, under each kind, the JSON object that kind's channel
-- decodes: vendor_id, sender_ids and dlt_templates (its element format
-- unchanged) go under "sms" as sender_id, sender_ids and dlt_templates,
-- and primary_gateway under "chat". A member that was empty (an empty
-- string, NULL, an empty array, JSON null) is left out, and so is a kind
-- left with no member: such an account has no settings of that kind,
-- which its channel reads as its defaults, as it read the empty columns.
-- The rewrite locks the accounts table for as long as it takes; processes
-- that still read the old columns fail until they are upgraded.
ALTER TABLE {{s}}{{p}}accounts
    ADD COLUMN settings jsonb NOT NULL DEFAULT '{}'
        CHECK (jsonb_typeof(settings) = 'object');

UPDATE {{s}}{{p}}accounts AS a SET settings = c.settings
FROM (
    SELECT id,
        CASE WHEN sms = '{}' THEN '{}' ELSE jsonb_build_object('sms', sms) END
        || CASE WHEN primary_gateway = '' THEN '{}'
            ELSE jsonb_build_object('chat', jsonb_build_object('primary_gateway', primary_gateway)) END
        AS settings
    FROM (
        SELECT id, primary_gateway,
            CASE WHEN vendor_id = '' THEN '{}'::jsonb
                ELSE jsonb_build_object('sender_id', vendor_id) END
            || CASE WHEN cardinality(sender_ids) > 0
                THEN jsonb_build_object('sender_ids', to_jsonb(sender_ids)) ELSE '{}' END
            || CASE WHEN dlt_templates IS NULL OR dlt_templates IN ('null', '[]') THEN '{}'
                ELSE jsonb_build_object('dlt_templates', dlt_templates) END
            AS sms
        FROM {{s}}{{p}}accounts
    ) AS parts
) AS c
WHERE c.id = a.id AND c.settings <> '{}';

ALTER TABLE {{s}}{{p}}accounts
    DROP COLUMN vendor_id,
    DROP COLUMN primary_gateway,
    DROP COLUMN dlt_templates,
    DROP COLUMN sender_ids;
